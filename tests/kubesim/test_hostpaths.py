"""Mount points on the host shared by kubesim instances (sim/podruntime.HostPaths):
instances that create and remove the same paths at the same time neither fail
(a directory made by the other one between the check and the mkdir) nor remove
a path the other one still uses."""
import multiprocessing
import os
import shutil
import tempfile
import unittest

from sim import podruntime


def _instance(root, registry, name, rounds, q):
    try:
        podruntime.REGISTRY = registry
        state = os.path.join(root, "state-" + name)
        for r in range(rounds):
            hp = podruntime.HostPaths(state, name)
            for i in range(20):
                hp.ensure(os.path.join(root, "mnt", "d%d" % i, "sub", "f"), i % 2 == 0)
            for i in range(20):
                p = os.path.join(root, "mnt", "d%d" % i, "sub", "f")
                if not os.path.lexists(p):
                    raise AssertionError("round %d: %s removed while in use" % (r, p))
            podruntime.remove_created(state, name)
        q.put(None)
    except BaseException as e:  # reported to the test, not lost in the child
        q.put("%s: %r" % (name, e))


class HostPathsTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="kubesim-hostpaths-")

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def test_concurrent_instances(self):
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue()
        registry = os.path.join(self.root, "registry")
        procs = [ctx.Process(target=_instance, args=(self.root, registry, "i%d" % n, 15, q))
                 for n in range(4)]
        for p in procs:
            p.start()
        errors = [q.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(10)
        self.assertEqual([e for e in errors if e], [])
        # the last one out removed everything
        self.assertFalse(os.path.exists(os.path.join(self.root, "mnt")))
        self.assertFalse(os.path.exists(registry))


if __name__ == "__main__":
    unittest.main()
