"""Output formats for ``torchpatch check``: full, concise, json, github, sarif."""
