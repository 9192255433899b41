# sshd_fixture.sh - the job key pair and sshd configuration the SSH tests share, sourced.
#   sshd_fixture DIR   makes DIR/ssh/ laid out like the <job>-ssh Secret mounted at
#                      sshAuthMountPath (ssh-privatekey 0600, ssh-publickey, authorized_keys;
#                      a fresh Ed25519 key) and DIR/sshd_config: port 2222, that key as the
#                      host key, key login only, no PAM, no pid file; also /run/sshd.
# Returns non-zero when ssh-keygen fails.
sshd_fixture() {
  local k=$1/ssh
  mkdir -p "$k" /run/sshd || return 1
  ssh-keygen -q -t ed25519 -N '' -C job -f "$k/id" || return 1
  cp "$k/id" "$k/ssh-privatekey" && cp "$k/id.pub" "$k/ssh-publickey" && cp "$k/id.pub" "$k/authorized_keys" || return 1
  chmod 600 "$k/ssh-privatekey"
  cat > "$1/sshd_config" <<CFG
Port 2222
HostKey $k/ssh-privatekey
AuthorizedKeysFile $k/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 100
PidFile none
CFG
}
