#!/usr/bin/env bash
exec python3 "$(dirname "$0")/deps_fixture_torch.py" "$@"
