# Sourced by the ensure-*.sh scripts: installs a Debian package when its program is missing.
# ensure_debian_package <label> <program path> <package> <override variable>
# Idempotent: does nothing when the program is there. Needs root (or sudo) to install.
ensure_debian_package () {
  local label=$1 program=$2 package=$3 override=$4
  if [ -x "$program" ]; then
    echo "$label: found at $program"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$label: $program is missing and apt-get is not available; install $package and set $override to its path" >&2
    return 1
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    else
      echo "$label: installing needs root (or sudo): apt-get install $package" >&2
      return 1
    fi
  fi
  echo "$label: installing Debian's $package package"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$package" >/dev/null
  if [ ! -x "$program" ]; then
    echo "$label: the package installed but $program is still missing" >&2
    return 1
  fi
}
