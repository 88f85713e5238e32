"""Vendored secret rules (package data): `betterleaks.json`, translated from Betterleaks' default
configuration by `translate.py`. LICENSE-betterleaks.txt holds its MIT license; README.md says
where it came from and how to update it."""
