import json
try:
    import yaml
except ImportError:
    yaml = None
