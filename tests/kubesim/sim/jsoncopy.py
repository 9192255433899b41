"""Deep copies of JSON-shaped API objects, for the store and everything that edits a copy
of what it read (patches, controllers, the HTTP layer). Its own module so that patch.py
need not import store.py, which applies patches (no import cycle)."""
import pickle


def deepcopy(o):
    """Deep copy of JSON-shaped data (pickle round trip: ~2.5x faster than a Python walk)."""
    if isinstance(o, (dict, list)):
        return pickle.loads(pickle.dumps(o, pickle.HIGHEST_PROTOCOL))
    return o
