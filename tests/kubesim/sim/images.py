"""Image map (tests/kubesim/images.conf, or the file `--set images_conf=FILE` names): an
image name resolves to a PATH prefix, to "run host commands as they are", to a pull
failure, or to "run it from the local image store" (sim/imagestore.py); a host-path
image may also name a ROOT directory holding the image's own files (its /etc/passwd, a
user's home...), which the kubelet lays over the host's files in each container, and an
Entrypoint (entrypoint=ARG,ARG...: the stand-in's for the image's ENTRYPOINT, run when a
container sets args but no command, as Kubernetes runs a real image's)."""
import fnmatch
import os


STORE = "store"      # resolve(): run the image from the local containers-storage


class ImageError(Exception):
    """The image cannot be "pulled"; message worded like containerd's."""
    reason = "ErrImagePull"


def _names(image):
    """The spellings of image a pattern may match."""
    out = [image]
    base = image.split("@", 1)[0]
    last = base.rsplit("/", 1)
    if ":" in last[-1]:
        base = base[:base.rindex(":")]
    out.append(base)
    for n in list(out):
        if n.startswith("docker.io/"):
            out.append(n[len("docker.io/"):])
        if n.startswith("docker.io/library/"):
            out.append(n[len("docker.io/library/"):])
    return out


def full_ref(image):
    """docker.io/library/busybox:latest style reference (as the runtime reports it)."""
    ref = image
    first = ref.split("/", 1)[0]
    if "/" not in ref:
        ref = "docker.io/library/" + ref
    elif "." not in first and ":" not in first and first != "localhost":
        ref = "docker.io/" + ref
    if "@" not in ref and ":" not in ref.rsplit("/", 1)[-1]:
        ref += ":latest"
    return ref


class ImageMap:
    """Loads images.conf and resolves images."""

    def __init__(self, conf_file, repo_root):
        self.repo_root = repo_root
        self.rules = []
        self.entrypoints = []   # per rule: the stand-in's Entrypoint (argv list) or None
        self.conf_file = conf_file
        try:
            with open(conf_file) as f:
                for n, line in enumerate(f, 1):
                    line = line.split("#", 1)[0].strip()
                    if not line:
                        continue
                    parts = line.split()
                    ep = [p for p in parts if p.startswith("entrypoint=")]
                    parts = [p for p in parts if not p.startswith("entrypoint=")]
                    if len(parts) not in (2, 3) or len(ep) > 1 or (ep and not ep[0][11:]):
                        raise ValueError("%s:%d: expected 'PATTERN TARGET [ROOT]' and at most one "
                                         "entrypoint=ARG,..., got %r" % (conf_file, n, line))
                    self.rules.append((parts[0], parts[1], parts[2] if len(parts) == 3 else None))
                    self.entrypoints.append(ep[0][11:].split(",") if ep else None)
        except FileNotFoundError:
            pass

    def _dir(self, d):
        return d if os.path.isabs(d) else os.path.join(self.repo_root, d)

    def entrypoint(self, image):
        """The Entrypoint (argv list) of the first rule matching image, or None."""
        names = _names(image or "")
        for (pat, _t, _r), ep in zip(self.rules, self.entrypoints):
            if any(fnmatch.fnmatchcase(n, pat) for n in names):
                return list(ep) if ep else None
        return None

    def resolve(self, image):
        """Returns a directory to prepend to PATH, None (host commands) or STORE (the
        image's own filesystem from the local store); raises ImageError when the pull
        must fail."""
        return self.resolve_full(image)[0]

    def resolve_full(self, image):
        """(PATH prefix, None or STORE; image ROOT dir or None); raises ImageError when the
        pull must fail (also when a ROOT is named and does not exist)."""
        if not image:
            raise ImageError("image name is empty")
        names = _names(image)
        for pat, target, root in self.rules:
            if not any(fnmatch.fnmatchcase(n, pat) for n in names):
                continue
            ref = full_ref(image)
            if target == "missing":
                raise ImageError('rpc error: code = NotFound desc = failed to pull and unpack '
                                 'image "%s": failed to resolve reference "%s": %s: not found'
                                 % (ref, ref, ref))
            r = self._dir(root) if root else None
            if r and not os.path.isdir(r):
                raise ImageError('rpc error: code = NotFound desc = failed to pull and unpack '
                                 'image "%s": kubesim maps its files to %s, which does not exist '
                                 '(build the image stand-in first)' % (ref, r))
            if target == "host":
                return None, r
            if target == STORE:
                return STORE, None
            d = self._dir(target)
            if not os.path.isdir(d):
                raise ImageError('rpc error: code = NotFound desc = failed to pull and unpack '
                                 'image "%s": kubesim maps it to %s, which does not exist: run '
                                 '`make install DESTDIR=build/stage` (or `make stage`) in %s'
                                 % (ref, d, self.repo_root))
            return d, r
        return None, None


def passwd_entry(root, uid):
    """(name, gid, home) of uid in ROOT/etc/passwd, or None when the image has no
    passwd file or no such user (then the host's is used)."""
    try:
        with open(os.path.join(root, "etc", "passwd")) as f:
            for line in f:
                p = line.rstrip("\n").split(":")
                if len(p) >= 6 and p[2] == str(uid):
                    return p[0], int(p[3]), p[5]
    except (OSError, ValueError):
        return None
    return None


def layer_mounts(root, copy):
    """Bind mounts that lay the image's files (COPY, a private copy of ROOT) over the
    host's: each entry one level below a top-level directory of ROOT (etc/passwd,
    home/mpiuser) replaces the host's path of that name, whole. [(src, dst)]."""
    out = []
    for top in sorted(os.listdir(root)):
        if not os.path.isdir(os.path.join(root, top)) or os.path.islink(os.path.join(root, top)):
            continue
        for name in sorted(os.listdir(os.path.join(root, top))):
            out.append((os.path.join(copy, top, name), "/%s/%s" % (top, name)))
    return out
