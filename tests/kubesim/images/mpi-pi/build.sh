#!/bin/sh
# build.sh OUT PI - builds kubesim's stand-in for an image made to upstream MPI
# Operator's conventions (mpioperator/mpi-pi): OUT/bin (PATH prefix, empty: host
# commands) and OUT/root, the image's own files laid over the host's in each
# container (images.conf third column): /etc/passwd and /etc/group with the
# non-root user mpiuser (uid/gid 1000, home /home/mpiuser; the host's own uid
# 1000 entry is left out), /home/mpiuser/.sshd_config (sshd_config + Port 2222)
# and /home/mpiuser/pi (the MPI program PI). Run as root (ownership is set).
# The real image is images/mpi-pi (`make images`); tests/integration/
# controller_upstream_ssh.sh uses this stand-in only where real images cannot be built
# (no buildah, mmdebstrap or root) or when told to (UPSTREAM_IMAGE=standin).
set -eu
[ $# -eq 2 ] || { echo "usage: $0 OUT PI" >&2; exit 2; }
out=$1 pi=$2 here=$(cd "$(dirname "$0")" && pwd)
[ -x "$pi" ] || { echo "$0: $pi is not an executable" >&2; exit 1; }
new=$out.new.$$
trap 'rm -rf "$new"' EXIT
mkdir -p "$new/bin" "$new/root/etc" "$new/root/home/mpiuser/.ssh"
not_1000='^[^:]*:[^:]*:1000:'
grep -v -e '^mpiuser:' -e "$not_1000" /etc/passwd > "$new/root/etc/passwd"
echo 'mpiuser:x:1000:1000::/home/mpiuser:/bin/sh' >> "$new/root/etc/passwd"
grep -v -e '^mpiuser:' -e "$not_1000" /etc/group > "$new/root/etc/group"
echo 'mpiuser:x:1000:' >> "$new/root/etc/group"
chmod 644 "$new/root/etc/passwd" "$new/root/etc/group"
{ cat "$here/sshd_config"; echo "Port 2222"; } > "$new/root/home/mpiuser/.sshd_config"
cp "$pi" "$new/root/home/mpiuser/pi"
chown -R 1000:1000 "$new/root/home/mpiuser"
chmod 755 "$new/root/home/mpiuser"
rm -rf "$out"
mv "$new" "$out"
