# SPDX-License-Identifier: MIT
# Replacing members that are already committed in a container, with unmodified coreutils and
# the shell: cp, mv, tee, install (creates 0600, copies, then chmods by name) and `>` over an existing member
# give what a real file system gives: the same exit status, bytes and permissions, run for run
# (cp and mv probe their target with an O_PATH|O_DIRECTORY open first; a member must answer
# ENOTDIR, not ENOENT, or cp takes it as absent and fails with EEXIST).

export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
export SLUICE_CAPTURE='ckpt.%r'
head -c 70000 /dev/urandom > new.bin
printf 'short\n' > new.txt

# The same steps in a plain folder (no sluice) and in a captured one (under sluice).
steps() {
  local run=$1
  set +e # a step that fails is reported by its status, like the plain run's
  umask 022
  for r in 0 1 2 3 4 5; do $run sh -c "head -c $((r * 1000 + 5)) /dev/zero > ckpt.$r"; done
  $run cp ../new.bin ckpt.0; echo "cp $?"
  cp ../new.txt moved.txt
  $run mv moved.txt ckpt.1; echo "mv $?"
  $run sh -c 'cat ../new.txt | tee ckpt.2 > /dev/null'; echo "tee $?"
  $run install -m 644 ../new.bin ckpt.3; echo "install $?"
  $run sh -c 'echo redirected > ckpt.4'; echo "redirect $?"
  $run sh -c 'echo appended >> ckpt.5'; echo "append $?"
  $run cp -f ../new.txt ckpt.5; echo "cp -f $?"
  for r in 0 1 2 3 4 5; do
    echo "ckpt.$r $($run stat -c '%a %s' ckpt.$r) $($run sh -c "md5sum < ckpt.$r")"
  done
  echo "moved.txt exists: $([ -e moved.txt ] && echo yes || echo no)"
}
mkdir plain captured
(cd plain && steps "") > plain.out 2>&1
(cd captured && steps run_sluice) > captured.out 2>&1
cat captured.out
expect_eq "same statuses, sizes, modes and bytes as a real file system" "$(cat plain.out)" "$(cat captured.out)"
expect_eq "one container, no per-rank files" "ckpt.@r.sluice" "$(cd captured && echo *)"

# install -m 600: the member's permissions are those asked (a container takes the most
# restrictive of its members', docs/SECURITY.md, so here every member of the set shows them).
(cd captured && run_sluice install -m 600 ../new.txt ckpt.3)
expect_eq "install -m 600 over a committed member" "600 6" "$(cd captured && run_sluice stat -c '%a %s' ckpt.3)"
(cd plain && install -m 600 ../new.txt ckpt.3)

# A later process sees the same, and so does the container (extract, without sluice).
for r in 0 1 2 3 4 5; do
  (cd captured && run_sluice cmp "../plain/ckpt.$r" "ckpt.$r") || fail "ckpt.$r differs when read back"
done
echo "ok: every member reads back as the plain file"
