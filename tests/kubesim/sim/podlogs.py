"""What a container run leaves in files: its CRI-format log (logs/<container>/<run>.log
under the pod's directory, written by podinit, served by sim/logs.py for pods/log) and its
termination message (the terminationMessagePath file, or the log's tail with
FallbackToLogsOnError)."""
import os


class WorkerLogs:
    """PodWorker's log files (a part of sim/kubelet.py's PodWorker; self is the worker)."""

    def log_path(self, c, n):
        return os.path.join(self.dir, "logs", c.name, "%d.log" % n)

    def termination_message(self, c, code):
        text = ""
        try:
            with open(c.term_file, "rb") as f:
                text = f.read(4096).decode(errors="replace")
        except (OSError, TypeError):
            pass
        if not text and code != 0 and \
                c.spec.get("terminationMessagePolicy") == "FallbackToLogsOnError":
            lines = []
            try:
                with open(c.log_file, "rb") as f:
                    for ln in f.read().splitlines()[-80:]:
                        parts = ln.split(b" ", 3)
                        if len(parts) == 4:
                            lines.append(parts[3].decode(errors="replace"))
            except (OSError, TypeError):
                pass
            text = "\n".join(lines)[-2048:]
        return text
