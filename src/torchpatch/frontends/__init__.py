"""Front ends: the ``torchpatch`` command and its subcommands (and every other way in).

Everything here imports the core (engine, rules, audit, doctor); nothing in the core imports this package.
"""
