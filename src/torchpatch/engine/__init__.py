"""The linting engine: discover → read → parse → resolve names → run rules → edits."""
