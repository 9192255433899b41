#!/usr/bin/env bash
# plugins/krew.sh: `kubectl mpijob`'s krew archive as a release ships it, and a manifest that
# installs it (`make krew`; docs/agent.md "krew").
#
#   plugins/krew.sh [BINDIR [OUTDIR]]     default: bin build/krew
#
# OUTDIR/mpijob-linux-amd64.tar.gz holds bin/mpi-agent alone (mode 0755, from BINDIR, the
# `make install` layout): krew extracts only regular files and directories from a .tar.gz and
# refuses a symlink or a hard link ("unable to handle file type 50|49"), so the second name,
# kubectl-mpijob, is the link krew makes itself ($KREW_ROOT/bin/kubectl-mpijob -> the installed
# mpi-agent; kubectl runs it by that path, so argv[0] names the plugin). The archive is
# deterministic: names sorted, mtime 0, owner and group 0, modes fixed, gzip without name or
# time, so the same mpi-agent gives the same sha256.
# OUTDIR/mpijob.yaml is plugins/mpijob.yaml with that archive's sha256 and a file:// uri naming
# it: krew checks the sum against the archive given with --archive, which replaces the download
# of uri (krew only requires uri to be set). Install it with
#   kubectl krew install --manifest OUTDIR/mpijob.yaml --archive OUTDIR/mpijob-linux-amd64.tar.gz
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BINDIR=${1:-$ROOT/bin}
OUTDIR=${2:-$ROOT/build/krew}
MANIFEST=$ROOT/plugins/mpijob.yaml
ARCHIVE=mpijob-linux-amd64.tar.gz
die() { echo "make krew: $*" >&2; exit 1; }

agent=$BINDIR/mpi-agent
[ -x "$agent" ] || die "no $agent (run make)"
# the platform the manifest names: an ELF x86-64 executable (e_machine 0x3e at offset 18)
[ "$(head -c 4 "$agent" | od -An -c | tr -d ' ')" = '177ELF' ] &&
  [ "$(od -An -tx1 -j18 -N2 "$agent" | tr -d ' ')" = 3e00 ] ||
  die "$agent is not a linux/amd64 executable, the platform plugins/mpijob.yaml names"
# the manifest's spec.version is the program's
want=$(sed -n 's/^  version: v\(.*\)$/\1/p' "$MANIFEST")
have=$("$agent" --version | sed -n 's/^mpi-agent //p')
[ -n "$want" ] && [ "$want" = "$have" ] ||
  die "plugins/mpijob.yaml's spec.version is v$want but $agent --version says $have"

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
stage=$OUTDIR/archive
rm -rf "$stage" "$OUTDIR/$ARCHIVE" "$OUTDIR/mpijob.yaml"
install -d -m 0755 "$stage/bin"
install -m 0755 "$agent" "$stage/bin/mpi-agent"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode='u=rwX,go=rX' --format=gnu \
  -C "$stage" -cf - bin | gzip -n -9 >"$OUTDIR/$ARCHIVE.tmp"
mv "$OUTDIR/$ARCHIVE.tmp" "$OUTDIR/$ARCHIVE"
rm -rf "$stage"
sum=$(sha256sum "$OUTDIR/$ARCHIVE" | cut -d' ' -f1)

# the manifest: the committed one's body with its one platform's uri and sha256 filled in
[ "$(grep -c '^    uri: ' "$MANIFEST")" = 1 ] && [ "$(grep -c '^    sha256: ' "$MANIFEST")" = 1 ] ||
  die "plugins/mpijob.yaml: expected one platform with one uri and one sha256"
{
  echo "# $OUTDIR/mpijob.yaml - written by make krew (plugins/krew.sh) from plugins/mpijob.yaml:"
  echo "# its sha256 is $ARCHIVE's, its uri names that file. Install with"
  echo "#   kubectl krew install --manifest $OUTDIR/mpijob.yaml --archive $OUTDIR/$ARCHIVE"
  sed -e '/^#/d' -e "s|^    uri: .*|    uri: file://$OUTDIR/$ARCHIVE|" -e "s|^    sha256: .*|    sha256: \"$sum\"|" "$MANIFEST"
} >"$OUTDIR/mpijob.yaml.tmp"
mv "$OUTDIR/mpijob.yaml.tmp" "$OUTDIR/mpijob.yaml"
echo "make krew: $OUTDIR/$ARCHIVE (sha256 $sum) and $OUTDIR/mpijob.yaml"
