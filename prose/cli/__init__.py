"""The `prose` command line: thin commands over the library."""
