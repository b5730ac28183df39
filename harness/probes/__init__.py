"""The differential probe engine: rows × columns, each column in its own tree and child process."""
