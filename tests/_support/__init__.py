"""Helpers shared by the test modules (not tests themselves): imported as ``_support.NAME``."""
