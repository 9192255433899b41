#!/bin/sh
# mkbundle.sh OUTDIR LAUNCHER PROG... - builds the self-contained bundle: for each
# PROG (mpi-rsh, mpi-agent) OUTDIR/NAME is a copy of the static LAUNCHER and
# OUTDIR/libexec/NAME the stripped program; OUTDIR/lib holds the dynamic loader
# and every shared library the programs load (from ldd), so the bundle runs in
# an image without those libraries or with an older glibc. See docs/rsh.md.
set -eu
out=$1; launcher=$2; shift 2
[ $# -gt 0 ] || { echo "mkbundle.sh: no programs" >&2; exit 2; }
tmp=$out.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp/lib" "$tmp/libexec"
trap 'rm -rf "$tmp"' EXIT
for p in "$@"; do
  [ -x "$p" ] || { echo "mkbundle.sh: $p is not an executable" >&2; exit 2; }
  name=$(basename "$p")
  strip -s -o "$tmp/libexec/$name" "$p"
  install -m 0755 "$launcher" "$tmp/$name"
  # "libfoo.so.1 => /lib/x86_64-linux-gnu/libfoo.so.1 (0x...)" and the loader line
  ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $1 ~ /^\/.*ld-linux/ {print "ld-linux-x86-64.so.2", $1}' |
  while read -r soname path; do
    [ -e "$tmp/lib/$soname" ] || cp -L "$path" "$tmp/lib/$soname"
  done
done
[ -e "$tmp/lib/ld-linux-x86-64.so.2" ] || { echo "mkbundle.sh: no dynamic loader found by ldd" >&2; exit 2; }
chmod 0755 "$tmp/lib/ld-linux-x86-64.so.2"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "bundle $out: $(ls "$out/lib" | wc -l) libraries, $(du -sk "$out" | cut -f1) KiB"
