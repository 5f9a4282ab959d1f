"""The jinja2 templates the generator renders (one per generated file)."""
