#!/usr/bin/env bash
# plots.sh - the benchmarks' pictures can be regenerated (issue 41 item 3): bench/plot.sh, run on
# the committed bench/results/*.tsv into a temporary directory, writes every PNG it lists
# (`bench/plot.sh --list`), each a non-empty PNG file; every TSV a plot reads has its
# provenance lines (command, commit, date, load), the header line with the columns the plot
# reads, and rows as wide as that header; every PNG is committed under docs/img/ and shown by
# docs/ or the README (a Markdown image link); and a TSV that lacks a column the plot reads
# makes bench/plot.sh fail, naming the column. Seconds, no build needed; `make plots-check`
# runs it, and make test before the build.
set -u
cd "$(dirname "$0")/.." || exit 2
command -v gnuplot >/dev/null || { echo "plots.sh: gnuplot not found (make deps installs gnuplot-nox)" >&2; exit 2; }
fail=0
offence() {
  echo "plots.sh: $*" >&2
  fail=1
}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# header FILE: the first line that is not a comment
header() { grep -v -m1 '^#' "$1"; }

mapfile -t plots < <(bench/plot.sh --list)
[ "${#plots[@]}" -ge 4 ] || offence "bench/plot.sh --list names ${#plots[@]} plots, expected 4 or more"
for p in "${plots[@]}"; do
  read -r png glob columns <<<"$p"
  n=0
  for f in bench/results/$glob; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    for k in command commit date load; do
      grep -q "^# $k: ." "$f" || offence "$f: no '# $k:' provenance line"
    done
    h=$(header "$f")
    for c in $columns; do
      printf '%s\n' "$h" | tr '\t' '\n' | grep -qx -- "$c" || offence "$f: the header lacks column $c (read by $png)"
    done
    width=$(printf '%s\n' "$h" | awk -F'\t' '{print NF}')
    rows=$(grep -v '^#' "$f" | tail -n +2 | awk -F'\t' -v w="$width" 'NF != w {bad++} END {print NR + 0, bad + 0}')
    [ "${rows% *}" -ge 1 ] || offence "$f: no data row"
    [ "${rows#* }" = 0 ] || offence "$f: ${rows#* } rows differ in width from the header ($width columns)"
  done
  [ "$n" -ge 1 ] || offence "no bench/results/$glob for $png"
  [ -s "docs/img/$png" ] || offence "docs/img/$png is not committed (run make plots)"
  grep -qF "](img/$png)" docs/*.md || grep -qF "](docs/img/$png)" README.md ||
    offence "docs/img/$png is shown nowhere in docs/*.md or README.md"
done

# the one command, on the committed TSVs, into a temporary directory
if bench/plot.sh -o "$tmp/img" >"$tmp/plot.out" 2>&1; then
  for p in "${plots[@]}"; do
    png=${p%% *}
    if [ ! -s "$tmp/img/$png" ]; then
      offence "bench/plot.sh wrote no $png"
    elif [ "$(head -c 8 "$tmp/img/$png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
      offence "$png is not a PNG file"
    fi
  done
else
  cat "$tmp/plot.out" >&2
  offence "bench/plot.sh failed on the committed TSVs"
fi

# a TSV without a column its plot reads: bench/plot.sh must fail and name it
mkdir -p "$tmp/res" && cp bench/results/*.tsv "$tmp/res/" || exit 2
sed -i 's/^phase\tat_s$/phase\tat_seconds/' "$tmp/res/launch_phases.tsv"
if bench/plot.sh -r "$tmp/res" -o "$tmp/img2" >"$tmp/bad.out" 2>&1; then
  offence "bench/plot.sh succeeded on a launch_phases.tsv without its at_s column"
elif ! grep -q 'no column at_s' "$tmp/bad.out"; then
  cat "$tmp/bad.out" >&2
  offence "bench/plot.sh failed without naming the missing column at_s"
fi

[ $fail = 0 ] && echo "plots.sh: ${#plots[@]} plots regenerated from bench/results/, their TSVs' headers and docs' links checked"
exit $fail
