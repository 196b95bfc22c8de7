"""Ready-made ding_env envs and configs, one folder per family and env."""

from pkgutil import extend_path

# DI-engine's own dizoo may be installed beside ours: each of our packages extends its path with the
# same-named folders further on sys.path, so DI-engine's modules (dizoo.box2d...) stay importable.
__path__ = extend_path(__path__, __name__)
