# A bootstrap whose default list has numpy; --extra adds yaml.
packages=(
  cmake python3 python3-numpy
)
for arg in "$@"; do
  case "$arg" in
    --extra) packages+=(python3-yaml) ;;
  esac
done
