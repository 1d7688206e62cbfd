"""Subcommands of the `sabot` command line, one a module."""
