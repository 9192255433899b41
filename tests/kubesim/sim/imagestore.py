"""Real images for kubesim pods: images in the local containers-storage (what buildah,
podman and `make images` write; vfs driver), read directly from the store's files.

With the vfs driver every layer directory holds the image's complete root filesystem up to
that layer (whiteouts already applied when the layer was stored), so the image's top layer
is its root: a container mounts it read-only as the lower layer of an overlay whose upper
(writable) layer is its own (sim/podinit.py). The image's config (Entrypoint, Cmd, Env,
WorkingDir, User) is the OCI config blob stored with the image.

Store layout used (containers/storage, vfs driver):
  ROOT/vfs-images/images.json            [{"id", "names", "digest", "layer", ...}]
  ROOT/vfs-images/<id>/=<base64(key)>    big data; key "sha256:<id>" is the config blob
  ROOT/vfs/dir/<layer>                   the layer's full root filesystem
"""
import base64
import json
import os

from .images import ImageError, full_ref

DEFAULT_ROOT = "/var/lib/containers/storage"


class Image:
    def __init__(self, store, rec, ref):
        self.id = rec["id"]
        self.names = rec.get("names") or []
        self.digest = rec.get("digest") or ("sha256:" + self.id)
        self.layer = rec.get("layer") or ""
        self.rootfs = os.path.join(store.root, "vfs", "dir", self.layer)
        self.ref = ref
        self.store_root = store.root
        path = os.path.join(store.root, "vfs-images", self.id,
                            "=" + base64.b64encode(("sha256:" + self.id).encode()).decode())
        try:
            with open(path) as f:
                cfg = json.load(f)
        except (OSError, ValueError) as e:
            raise ImageError('rpc error: code = Unknown desc = failed to read the config of '
                             'image "%s" (%s) in %s: %s' % (ref, self.id, store.root, e))
        self.config = cfg.get("config") or {}
        if not self.layer or not os.path.isdir(self.rootfs):
            raise ImageError('rpc error: code = Unknown desc = image "%s" (%s): its root '
                             'filesystem %s is missing from %s' % (ref, self.id, self.rootfs,
                                                                   store.root))

    def image_id(self):
        """imageID as a runtime reports it: repo@digest."""
        repo = full_ref(self.ref)
        repo = repo.split("@", 1)[0]
        if ":" in repo.rsplit("/", 1)[-1]:
            repo = repo[:repo.rindex(":")]
        return "%s@%s" % (repo, self.digest)

    def size(self):
        """Bytes of the image's layers (layers.json diff-size along the parent chain)."""
        try:
            with open(os.path.join(self.store_root, "vfs-layers", "layers.json")) as f:
                layers = {x["id"]: x for x in json.load(f)}
        except (OSError, ValueError, KeyError, TypeError):
            return 0
        total, lid, seen = 0, self.layer, set()
        while lid and lid in layers and lid not in seen:
            seen.add(lid)
            total += int(layers[lid].get("diff-size") or 0)
            lid = layers[lid].get("parent")
        return total

    def env(self):
        """The image's Env as an ordered dict."""
        out = {}
        for kv in self.config.get("Env") or []:
            k, _, v = kv.partition("=")
            out[k] = v
        return out

    def argv(self, command, args):
        """Kubernetes' merge: command replaces Entrypoint (and Cmd is dropped), args
        replaces Cmd."""
        ep = list(self.config.get("Entrypoint") or [])
        cmd = list(self.config.get("Cmd") or [])
        if command:
            return list(command) + list(args or [])
        return ep + (list(args) if args else cmd)

    def _lookup(self, fname, key, field):
        """Line of the image's /etc/passwd or /etc/group whose name or id is key."""
        try:
            with open(os.path.join(self.rootfs, "etc", fname)) as f:
                for line in f:
                    p = line.rstrip("\n").split(":")
                    if len(p) >= 4 and (p[0] == key or p[2] == key):
                        return p
        except OSError:
            pass
        return None

    def user(self, run_as_user, run_as_group):
        """(uid, gid, home, supplementary gids) for the container: runAsUser/runAsGroup
        over the image's User ("uid", "name", "uid:gid", "name:group"), resolved in the
        image's /etc/passwd and /etc/group, as the runtime does."""
        spec = self.config.get("User") or ""
        u, _, g = spec.partition(":")
        uid = gid = None
        home = "/"
        if run_as_user is not None:
            uid = int(run_as_user)
        elif u:
            if u.isdigit():
                uid = int(u)
            else:
                pw = self._lookup("passwd", u, 0)
                if pw is None:
                    raise ImageError('unable to find user %s: no matching entries in passwd '
                                     'file' % u)
                uid = int(pw[2])
        else:
            uid = 0
        pw = self._lookup("passwd", str(uid), 2)
        if pw is not None:
            home = pw[5] or "/"
        if run_as_group is not None:
            gid = int(run_as_group)
        elif g and run_as_user is None:
            if g.isdigit():
                gid = int(g)
            else:
                gr = self._lookup("group", g, 0)
                if gr is None:
                    raise ImageError('unable to find group %s: no matching entries in group '
                                     'file' % g)
                gid = int(gr[2])
        else:
            gid = int(pw[3]) if pw is not None else 0
        groups = [gid]
        name = pw[0] if pw is not None else None
        if name:
            try:
                with open(os.path.join(self.rootfs, "etc", "group")) as f:
                    for line in f:
                        p = line.rstrip("\n").split(":")
                        if len(p) >= 4 and name in p[3].split(",") and p[2].isdigit() \
                                and int(p[2]) not in groups:
                            groups.append(int(p[2]))
            except OSError:
                pass
        return uid, gid, home, groups


class ImageStore:
    """Read-only view of a containers-storage (vfs) store."""

    def __init__(self, root=None):
        self.root = root or DEFAULT_ROOT

    def _records(self):
        path = os.path.join(self.root, "vfs-images", "images.json")
        try:
            with open(path) as f:
                return json.load(f)
        except FileNotFoundError:
            if os.path.isdir(os.path.join(self.root, "overlay-images")):
                raise ImageError("rpc error: code = Unknown desc = kubesim reads only the vfs "
                                 "driver of containers-storage, and %s uses overlay: build "
                                 "with `buildah --storage-driver vfs` (make images does)"
                                 % self.root)
            return []
        except (OSError, ValueError) as e:
            raise ImageError("rpc error: code = Unknown desc = cannot read %s: %s" % (path, e))

    def lookup(self, image):
        """The Image for a pod's image reference, or None when the store lacks it. A
        reference matches a stored name exactly after Kubernetes' normalisation
        (busybox -> docker.io/library/busybox:latest), or a localhost/ name, or an
        image digest (name@sha256:...), or an image ID."""
        ref = full_ref(image)
        want = {ref, "localhost/" + image}
        if ":" not in image.rsplit("/", 1)[-1] and "@" not in image:
            want.add("localhost/" + image + ":latest")
        digest = image.split("@", 1)[1] if "@" in image else None
        for rec in self._records():
            names = set(rec.get("names") or [])
            if names & want or (digest and digest in (rec.get("digest"),
                                                      "sha256:" + rec.get("id", ""))) \
                    or image in (rec.get("id"), "sha256:" + rec.get("id", "")):
                return Image(self, rec, image)
        return None
