"""Pieces every app's admin builds on: paging big tables, read-only records, project scoping."""
