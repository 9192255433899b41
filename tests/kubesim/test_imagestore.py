"""Real images (sim/imagestore.py, podinit.resolve_in) on a hand-made vfs store: reference
matching after Kubernetes' normalisation, Entrypoint/Cmd merge, User resolution in the
image's passwd/group, a missing config or layer, an overlay-driver store refused by name,
and mount-point paths resolved inside the image root (symlinks never leave it)."""
import base64
import json
import os
import shutil
import tempfile
import unittest

from sim import imagestore, podinit
from sim.images import ImageError


def make_store(root, names, config, passwd="", group="", layer="L1"):
    iid = "ab" * 32
    os.makedirs(os.path.join(root, "vfs-images", iid))
    with open(os.path.join(root, "vfs-images", "images.json"), "w") as f:
        json.dump([{"id": iid, "names": names, "digest": "sha256:" + "cd" * 32,
                    "layer": layer}], f)
    key = "=" + base64.b64encode(("sha256:" + iid).encode()).decode()
    with open(os.path.join(root, "vfs-images", iid, key), "w") as f:
        json.dump({"config": config}, f)
    etc = os.path.join(root, "vfs", "dir", "L1", "etc")
    os.makedirs(etc)
    with open(os.path.join(etc, "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n" + passwd)
    with open(os.path.join(etc, "group"), "w") as f:
        f.write("root:x:0:\n" + group)
    return iid


class ImageStoreTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.root)

    def test_lookup_names(self):
        iid = make_store(self.root, ["docker.io/library/debian:12", "localhost/mine:1"], {})
        st = imagestore.ImageStore(self.root)
        for ref in ("debian:12", "docker.io/library/debian:12", "library/debian:12",
                    "mine:1", "localhost/mine:1", iid, "x@sha256:" + "cd" * 32):
            self.assertIsNotNone(st.lookup(ref), ref)
        for ref in ("debian", "debian:11", "mine", "other/debian:12"):
            self.assertIsNone(st.lookup(ref), ref)
        img = st.lookup("debian:12")
        self.assertEqual(img.image_id(), "docker.io/library/debian@sha256:" + "cd" * 32)

    def test_argv_merge(self):
        make_store(self.root, ["docker.io/library/a:1"],
                   {"Entrypoint": ["/ep", "e1"], "Cmd": ["c1", "c2"]})
        img = imagestore.ImageStore(self.root).lookup("a:1")
        self.assertEqual(img.argv([], []), ["/ep", "e1", "c1", "c2"])
        self.assertEqual(img.argv([], ["x"]), ["/ep", "e1", "x"])
        self.assertEqual(img.argv(["/bin/sh"], []), ["/bin/sh"])
        self.assertEqual(img.argv(["/bin/sh"], ["-c", "y"]), ["/bin/sh", "-c", "y"])

    def test_user(self):
        make_store(self.root, ["docker.io/library/a:1"], {"User": "app"},
                   passwd="app:x:1000:1001::/home/app:/bin/sh\n",
                   group="app:x:1001:\nextra:x:1500:app,other\nstaff:x:50:\n")
        img = imagestore.ImageStore(self.root).lookup("a:1")
        self.assertEqual(img.user(None, None), (1000, 1001, "/home/app", [1001, 1500]))
        self.assertEqual(img.user(0, None), (0, 0, "/root", [0]))
        self.assertEqual(img.user(1000, 7), (1000, 7, "/home/app", [7, 1500]))
        self.assertEqual(img.user(4242, None), (4242, 0, "/", [0]))
        img.config["User"] = "65532:65532"
        self.assertEqual(img.user(None, None), (65532, 65532, "/", [65532]))
        img.config["User"] = "app:staff"
        self.assertEqual(img.user(None, None)[:2], (1000, 50))
        img.config["User"] = "nobody-here"
        with self.assertRaisesRegex(ImageError, "unable to find user nobody-here"):
            img.user(None, None)

    def test_env(self):
        make_store(self.root, ["docker.io/library/a:1"], {"Env": ["PATH=/x:/y", "A=b=c"]})
        img = imagestore.ImageStore(self.root).lookup("a:1")
        self.assertEqual(img.env(), {"PATH": "/x:/y", "A": "b=c"})

    def test_missing_layer(self):
        make_store(self.root, ["docker.io/library/a:1"], {}, layer="gone")
        with self.assertRaisesRegex(ImageError, "root filesystem .*gone is missing"):
            imagestore.ImageStore(self.root).lookup("a:1")

    def test_overlay_store_refused(self):
        os.makedirs(os.path.join(self.root, "overlay-images"))
        with self.assertRaisesRegex(ImageError, "only the vfs driver"):
            imagestore.ImageStore(self.root).lookup("a:1")

    def test_empty_store(self):
        self.assertIsNone(imagestore.ImageStore(self.root).lookup("a:1"))


class ResolveInTest(unittest.TestCase):
    def test_symlinks_stay_inside(self):
        r = tempfile.mkdtemp()
        try:
            os.makedirs(os.path.join(r, "run"))
            os.makedirs(os.path.join(r, "var"))
            os.symlink("/run", os.path.join(r, "var", "run"))
            os.symlink("../../../../etc", os.path.join(r, "up"))
            os.makedirs(os.path.join(r, "etc"))
            os.symlink("/nonexistent/resolv.conf", os.path.join(r, "etc", "resolv.conf"))
            f = podinit.resolve_in
            self.assertEqual(f(r, "/var/run/secrets/x"), os.path.join(r, "run/secrets/x"))
            self.assertEqual(f(r, "/up/hosts"), os.path.join(r, "etc/hosts"))
            self.assertEqual(f(r, "/../../etc/passwd"), os.path.join(r, "etc/passwd"))
            self.assertEqual(f(r, "/etc/resolv.conf"),
                             os.path.join(r, "nonexistent/resolv.conf"))
            os.symlink("loop", os.path.join(r, "loop"))
            with self.assertRaises(OSError):
                f(r, "/loop/x")
        finally:
            shutil.rmtree(r)


if __name__ == "__main__":
    unittest.main()
