#!/usr/bin/env bash
# Install a built FabricLab bundle for the current user, or remove it again.
#
#   packaging/install.sh [BUNDLE]        install (BUNDLE: default dist/fabriclab, or the bundle
#                                        this script is shipped in, _internal/share/install.sh)
#   packaging/install.sh --uninstall     remove what an install put in place
#
# PREFIX (default ~/.local) receives opt/fabriclab (the bundle), bin/fabriclab (a link),
# share/applications/fabriclab.desktop and share/icons/hicolor/{256x256,scalable}/apps/.
set -euo pipefail

PREFIX=${PREFIX:-$HOME/.local}
APP_DIR=$PREFIX/opt/fabriclab
DESKTOP=$PREFIX/share/applications/fabriclab.desktop
ICONS=$PREFIX/share/icons/hicolor
HERE=$(cd "$(dirname "$0")" && pwd)

refresh_caches() {
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$PREFIX/share/applications" || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$ICONS" 2>/dev/null || true
}

if [ "${1:-}" = "--uninstall" ]; then
  rm -rf "$APP_DIR"
  rm -f "$PREFIX/bin/fabriclab" "$DESKTOP" "$ICONS/256x256/apps/fabriclab.png" "$ICONS/scalable/apps/fabriclab.svg"
  refresh_caches
  echo "FabricLab removed from $PREFIX (your library and settings are kept)"
  exit 0
fi

if [ $# -ge 1 ]; then
  BUNDLE=$1
elif [ -x "$HERE/../../fabriclab" ]; then
  BUNDLE=$HERE/../..                      # run from inside a bundle
else
  BUNDLE=$HERE/../dist/fabriclab          # run from a checkout after `make package`
fi
BUNDLE=$(cd "$BUNDLE" 2>/dev/null && pwd) || { echo "error: no folder $1" >&2; exit 1; }
if [ ! -x "$BUNDLE/fabriclab" ] || [ ! -d "$BUNDLE/_internal" ]; then
  echo "error: $BUNDLE is not a FabricLab bundle (no fabriclab executable); run make package first" >&2
  exit 1
fi

SHARE=$BUNDLE/_internal/share
RESOURCES=$BUNDLE/_internal/resources
rm -rf "$APP_DIR.new"
mkdir -p "$PREFIX/opt" "$PREFIX/bin" "$(dirname "$DESKTOP")" "$ICONS/256x256/apps" "$ICONS/scalable/apps"
cp -a "$BUNDLE" "$APP_DIR.new"
rm -rf "$APP_DIR"
mv "$APP_DIR.new" "$APP_DIR"
ln -sfn "$APP_DIR/fabriclab" "$PREFIX/bin/fabriclab"
cp "$RESOURCES/icons/fabriclab.png" "$ICONS/256x256/apps/fabriclab.png"
cp "$RESOURCES/icons/fabriclab.svg" "$ICONS/scalable/apps/fabriclab.svg"
sed "s|^Exec=.*|Exec=$APP_DIR/fabriclab|" "$SHARE/fabriclab.desktop" > "$DESKTOP"
refresh_caches
echo "FabricLab $("$APP_DIR/fabriclab" --version | awk '{print $2}') installed in $APP_DIR"
echo "  menu entry: $DESKTOP"
echo "  command:    $PREFIX/bin/fabriclab (add $PREFIX/bin to PATH if it is not there)"
