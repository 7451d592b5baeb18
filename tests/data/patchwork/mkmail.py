#!/usr/bin/env python3
"""tests/data/patchwork/mkmail.py SERIES.json OUTDIR VERSION TAG: the series that
`klab series show --json` read (a seed of ../shared/seeds/) written back as RFC 822 mails, one
file per message in the order they are sent (the cover letter 0/N first when there is one), with
the headers a list mail has and Patchwork needs: Message-Id (<TAG.vVERSION.M@klab.test>), From,
To (netdev@vger.kernel.org), Subject ([PATCH net-next vN M/N] ...), Date, In-Reply-To and
References to the first message of the series, a plain-text UTF-8 body, and the diff after
"---" and the diffstat, as git format-patch writes it."""
import json, os, re, sys
from email.utils import formatdate

s = json.load(open(sys.argv[1]))
out, version, tag = sys.argv[2], int(sys.argv[3]), sys.argv[4]
os.makedirs(out, exist_ok=True)
patches = s["patches"]
n = len(patches)
vtxt = " v%d" % version if version > 1 else ""


def addr(a):
    if a and "<" in a:
        return a
    name = a or "Klab Test"
    return "%s <%s@example.org>" % (name, re.sub(r"[^a-z]+", ".", name.lower()).strip("."))


def mail(m, subject, author, body, first):
    mid = "<%s.v%d.%d@klab.test>" % (tag, version, m)
    h = ["From: %s" % addr(author), "To: netdev@vger.kernel.org", "Subject: %s" % subject,
         "Date: %s" % formatdate(localtime=False), "Message-Id: %s" % mid,
         "MIME-Version: 1.0", "Content-Type: text/plain; charset=UTF-8", "Content-Transfer-Encoding: 8bit"]
    if first:
        h += ["In-Reply-To: %s" % first, "References: %s" % first]
    with open(os.path.join(out, "%02d.eml" % m), "w") as f:
        f.write("\n".join(h) + "\n\n" + body)
    return mid


first = None
if s.get("cover") and n > 1:
    first = mail(0, "[PATCH net-next%s 0/%d] %s" % (vtxt, n, s["subject"]), s.get("author"),
                 s["cover"].rstrip("\n") + "\n", None)
for p in patches:
    body = p["body"].rstrip("\n") + "\n---\n" + p["diffstat"].rstrip("\n") + "\n\n" + p["diff"].rstrip("\n") + \
        "\n-- \n2.39.2\n"
    num = " %d/%d" % (p["seq"], n) if n > 1 else ""
    mid = mail(p["seq"], "[PATCH net-next%s%s] %s" % (vtxt, num, p["subject"]), p.get("author") or s.get("author"),
               body, first)
    first = first or mid
