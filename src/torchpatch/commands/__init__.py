"""The CLI's subcommands that belong to the linter."""
