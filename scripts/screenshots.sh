#!/bin/sh
# Screenshots of report.html in headless Chromium, at 1400 and 400 px wide,
# for the 4-day (DST) and the 365-day golden reports, to look at after a
# change to the page. They go to OUT (default /tmp/clickrecon-shots), never
# into the repository. Needs chromium (Debian: apt-get install chromium).
set -eu
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/clickrecon-shots}
mkdir -p "$out"
go test ./report -run 'TestGoldenEveryFormat' -count=1 >/dev/null
for name in 4day_dst 365day; do
	page="$out/$name.html"
	cp "report/testdata/$name/report.html.golden" "$page"
	for width in 1400 400; do
		profile=$(mktemp -d)
		chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
			--disable-component-update --disable-sync --no-first-run --hide-scrollbars \
			--user-data-dir="$profile" --window-size="$width,1000" \
			--screenshot="$out/$name-$width.png" "file://$page" 2>/dev/null
		rm -rf "$profile"
		echo "$out/$name-$width.png"
	done
done
