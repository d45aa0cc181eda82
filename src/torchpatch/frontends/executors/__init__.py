"""Where many files are checked or audited: this machine or a Ray cluster, and how their rows are gathered."""
