"""Image map with an image ROOT (images.conf third column): parsing, pull errors,
which host paths an image's files replace, and users from the image's passwd."""
import os
import shutil
import tempfile
import unittest

from sim.images import ImageError, ImageMap, layer_mounts, passwd_entry


class ImageRootTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d)
        os.makedirs(os.path.join(self.d, "img", "bin"))
        root = os.path.join(self.d, "img", "root")
        os.makedirs(os.path.join(root, "etc"))
        os.makedirs(os.path.join(root, "home", "mpiuser", ".ssh"))
        with open(os.path.join(root, "etc", "passwd"), "w") as f:
            f.write("root:x:0:0:root:/root:/bin/sh\nmpiuser:x:1000:1001::/home/mpiuser:/bin/sh\n")
        with open(os.path.join(root, "README"), "w") as f:
            f.write("a top-level file is not laid over anything\n")
        self.conf = os.path.join(self.d, "images.conf")

    def imap(self, text):
        with open(self.conf, "w") as f:
            f.write(text)
        return ImageMap(self.conf, self.d)

    def test_resolve_with_root(self):
        m = self.imap("up/pi*  img/bin  img/root\nplain/*  img/bin\n")
        d, r = m.resolve_full("docker.io/up/pi:openmpi")
        self.assertEqual(d, os.path.join(self.d, "img", "bin"))
        self.assertEqual(r, os.path.join(self.d, "img", "root"))
        self.assertEqual(m.resolve_full("plain/x:1"), (os.path.join(self.d, "img", "bin"), None))
        self.assertEqual(m.resolve("up/pi"), os.path.join(self.d, "img", "bin"))

    def test_entrypoint(self):
        m = self.imap("op/x*  img/bin  entrypoint=mpi-operator,-v=1\nop/*  img/bin  img/root\n")
        self.assertEqual(m.entrypoint("docker.io/op/x:latest"), ["mpi-operator", "-v=1"])
        self.assertEqual(m.resolve_full("op/x"), (os.path.join(self.d, "img", "bin"), None))
        self.assertIsNone(m.entrypoint("op/y"))
        with self.assertRaises(ValueError):
            self.imap("op/*  img/bin  entrypoint=\n")

    def test_missing_root_fails_the_pull(self):
        m = self.imap("up/*  img/bin  img/nope\n")
        with self.assertRaises(ImageError) as e:
            m.resolve_full("up/pi")
        self.assertIn("img/nope, which does not exist", str(e.exception))

    def test_bad_line(self):
        with self.assertRaises(ValueError) as e:
            self.imap("a b c d\n")
        self.assertIn("expected 'PATTERN TARGET [ROOT]'", str(e.exception))

    def test_layer_mounts_one_level_below_top(self):
        root = os.path.join(self.d, "img", "root")
        got = layer_mounts(root, "/copy")
        self.assertEqual(got, [("/copy/etc/passwd", "/etc/passwd"),
                               ("/copy/home/mpiuser", "/home/mpiuser")])

    def test_passwd_entry(self):
        root = os.path.join(self.d, "img", "root")
        self.assertEqual(passwd_entry(root, 1000), ("mpiuser", 1001, "/home/mpiuser"))
        self.assertEqual(passwd_entry(root, 0), ("root", 0, "/root"))
        self.assertIsNone(passwd_entry(root, 4242))
        self.assertIsNone(passwd_entry(os.path.join(self.d, "nothing"), 0))


if __name__ == "__main__":
    unittest.main()
