"""Translated pages: the page views, the Style dock, the mask brush, page exports."""
