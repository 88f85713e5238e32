"""The memory model and its files: parsing, rendering, validation, the store."""
