"""One module per lint rule; the registry table lives in `prose.check.registry`."""
