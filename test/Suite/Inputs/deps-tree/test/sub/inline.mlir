// RUN: %python -c "import yaml; print(1)"
// RUN: %S/../Inputs/deps_fixture_runner.sh
