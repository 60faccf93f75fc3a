#!/usr/bin/env bash
# toolchain-free.sh — install a partyradio .deb into a throwaway root and run it there with no
# Swift toolchain in sight. Nothing outside DIR is changed: the machine's own / is only read.
#
#   toolchain-free.sh install DIR DEB     dpkg -i DEB into an overlay of / whose changes stay in DIR/upper
#   toolchain-free.sh run DIR CMD...      run CMD in that root (/tmp and /run shared), the
#                                         toolchain hidden: empty tmpfs over the folder of `which swift`'s
#                                         toolchain and over /usr/lib/swift
#
# Each call makes its own mount namespace (unshare -m); the mounts vanish with it. `run` execs
# into CMD (its PID is CMD's), so it can run on a testbed host and be signalled like the binary.
set -euo pipefail
command=${1:?install or run}
dir=${2:?a directory}
shift 2

if [[ ${_PARTYRADIO_TOOLCHAIN_FREE_INNER:-} != 1 ]]; then
    mkdir -p "$dir/upper" "$dir/work" "$dir/root"
    # Where the toolchain is, seen from here (before it is hidden).
    swift_path=$(command -v swift || true)
    toolchain=""
    [[ -n $swift_path ]] && toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$swift_path")")")")
    export _PARTYRADIO_TOOLCHAIN_FREE_INNER=1 _PARTYRADIO_TOOLCHAIN="$toolchain"
    exec unshare -m --propagation private "$0" "$command" "$dir" "$@"
fi

root=$dir/root
case $command in
install)
    deb=${1:?a .deb}
    mount -t overlay overlay -o "lowerdir=/,upperdir=$dir/upper,workdir=$dir/work" "$root"
    ;;
run)
    # The machine's / with what install left on top, in a layer of this run's own (hard links,
    # so nothing is copied; two lower layers nested in one another are refused by the kernel).
    run=$(mktemp -d "$dir/run.XXXXXX")
    mkdir "$run/work" "$run/root"
    cp -al "$dir/upper" "$run/upper"
    root=$run/root
    mount -t overlay overlay -o "lowerdir=/,upperdir=$run/upper,workdir=$run/work" "$root"
    ;;
*) echo "Error: unknown command '$command'; use install or run." >&2; exit 2 ;;
esac
for path in /proc /sys /dev /run /tmp; do mount --rbind "$path" "$root$path"; done
for hidden in "$_PARTYRADIO_TOOLCHAIN" /usr/lib/swift; do
    [[ -n $hidden && -d $root$hidden ]] && mount -t tmpfs -o ro,size=4k,mode=0755 tmpfs "$root$hidden"
done
case $command in
install)
    cp "$deb" "$root/tmp/.partyradio-install-$$.deb"
    trap 'rm -f "$root/tmp/.partyradio-install-$$.deb"' EXIT
    chroot "$root" env DEBIAN_FRONTEND=noninteractive dpkg -i "/tmp/.partyradio-install-$$.deb"
    ;;
run)
    unset _PARTYRADIO_TOOLCHAIN_FREE_INNER _PARTYRADIO_TOOLCHAIN
    exec chroot "$root" "$@"
    ;;
esac
