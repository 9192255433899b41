"""kubesim: a single-node Kubernetes simulator (API server side + node side)."""
