"""Real engine environments per version (sglang first) and the glue that runs probes in them."""

from harness.engines.versions import parse_spec, version_from_pin

__all__ = ["parse_spec", "version_from_pin"]
