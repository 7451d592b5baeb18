#!/bin/bash
# check-pages.sh DIR: golden-structure checks of a generated report folder.
# Every <img src>, <object data>, <link href> and local <a href> must resolve to a file in DIR;
# no page may fetch from the network (src= or stylesheet href= with a scheme);
# no outside string may appear unescaped (<script>alert, <b>.lab).
# Prints one line per problem and exits 1 if there was any.
set -u
dir=$1
bad=0
[ -f "$dir/index.html" ] || { echo "missing: index.html"; exit 1; }
[ -f "$dir/style.css" ] || { echo "missing: style.css"; bad=1; }
for page in "$dir"/*.html; do
	name=$(basename "$page")
	# every attribute value that points somewhere
	while IFS= read -r ref; do
		attr=${ref%%=*}
		url=${ref#*=\"}; url=${url%\"}
		case "$url" in
		http://*|https://*|mailto:*)
			if [ "$attr" = src ]; then echo "$name: network fetch: $url"; bad=1; fi
			continue ;;
		'#'*) continue ;;
		*:*) echo "$name: unexpected scheme: $url"; bad=1; continue ;;
		esac
		file=${url%%#*}
		file=${file//&amp;/&}
		[ -n "$file" ] || continue
		if [ ! -f "$dir/$file" ]; then echo "$name: broken $attr: $url"; bad=1; fi
	done < <(grep -o -E '(src|href|data)="[^"]*"' "$page")
	if grep -q '<link[^>]*href="https\?:' "$page"; then echo "$name: stylesheet from the network"; bad=1; fi
	if grep -q -i '<script' "$page"; then echo "$name: has a <script> element or raw script text"; bad=1; fi
	if grep -q '<b>\.lab\|<b>"' "$page"; then echo "$name: unescaped host name"; bad=1; fi
	if LC_ALL=C grep -q -P '[\x01-\x08\x0b\x0c\x0e-\x1f]' "$page"; then echo "$name: control character left"; bad=1; fi
done
for svg in "$dir"/charts/*.svg; do
	[ -f "$svg" ] || continue
	if grep -q -i '<script' "$svg"; then echo "$(basename "$svg"): raw <script> in chart"; bad=1; fi
done
exit $bad
