"""Image map (tests/kubesim/images.conf, or the file `--set images_conf=FILE` names): an
image name resolves to a PATH prefix, to "run host commands as they are", to a pull
failure, or to "run it from the local image store" (sim/imagestore.py)."""
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
        self.conf_file = conf_file
        try:
            with open(conf_file) as f:
                for n, line in enumerate(f, 1):
                    line = line.split("#", 1)[0].strip()
                    if not line:
                        continue
                    parts = line.split()
                    if len(parts) != 2:
                        raise ValueError("%s:%d: expected 'PATTERN TARGET', got %r"
                                         % (conf_file, n, line))
                    self.rules.append((parts[0], parts[1]))
        except FileNotFoundError:
            pass

    def resolve(self, image):
        """Returns a directory to prepend to PATH, None (host commands) or STORE (the
        image's own filesystem from the local store); raises ImageError when the pull
        must fail."""
        if not image:
            raise ImageError("image name is empty")
        names = _names(image)
        for pat, target in self.rules:
            if not any(fnmatch.fnmatchcase(n, pat) for n in names):
                continue
            ref = full_ref(image)
            if target == "missing":
                raise ImageError('rpc error: code = NotFound desc = failed to pull and unpack '
                                 'image "%s": failed to resolve reference "%s": %s: not found'
                                 % (ref, ref, ref))
            if target == "host":
                return None
            if target == STORE:
                return STORE
            d = target if os.path.isabs(target) else os.path.join(self.repo_root, target)
            if not os.path.isdir(d):
                raise ImageError('rpc error: code = NotFound desc = failed to pull and unpack '
                                 'image "%s": kubesim maps it to %s, which does not exist: run '
                                 '`make install DESTDIR=build/stage` (or `make stage`) in %s'
                                 % (ref, d, self.repo_root))
            return d
        return None
