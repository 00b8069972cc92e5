# SPDX-License-Identifier: MIT
# What Python's os functions say about folder argv[1] (relative, with files in it), by name,
# by descriptor (dir_fd, fdopendir, fchdir) and as the working directory; no inode numbers or
# times. tests/integration/ckpt/capture_vdirs_calls.sh runs it on real folders and on sluice's
# virtual ones and compares.
import glob, os, shutil, stat, sys
d = sys.argv[1]
base = os.getcwd()
def show(what, f):
    try:
        v = f()
    except OSError as e:
        v = "error " + (os.strerror(e.errno) if e.errno else str(e))
    print(what, v)
m = lambda p: stat.filemode(os.stat(p).st_mode)
show("stat", lambda: m(d))
show("lstat ..", lambda: stat.filemode(os.lstat(d + "/..").st_mode))
show("statvfs", lambda: os.statvfs(d).f_bsize == os.statvfs(".").f_bsize and os.statvfs(d).f_fsid == os.statvfs(".").f_fsid)
show("disk_usage", lambda: shutil.disk_usage(d).total == shutil.disk_usage(".").total)
show("listdir", lambda: sorted(os.listdir(d)))
show("scandir", lambda: sorted((e.name, e.is_dir(), e.is_file()) for e in os.scandir(d)))
show("walk", lambda: [(r.replace(base, ""), sorted(ds), sorted(fs)) for r, ds, fs in os.walk(d)])
show("glob", lambda: sorted(glob.glob(d + "/*")))
show("exists isdir access", lambda: (os.path.exists(d), os.path.isdir(d), os.access(d, os.R_OK | os.X_OK)))
show("realpath", lambda: [os.path.realpath(p).replace(base, "") for p in (d, d + "/..", d + "/.")])
show("abspath", lambda: os.path.abspath(d + "/..").replace(base, ""))
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
show("fstat", lambda: stat.S_ISDIR(os.fstat(fd).st_mode))
show("listdir fd", lambda: sorted(os.listdir(fd)))
show("stat dir_fd", lambda: [os.stat(n, dir_fd=fd).st_size for n in sorted(os.listdir(fd))])
show("stat .. dir_fd", lambda: stat.filemode(os.stat("..", dir_fd=fd).st_mode))
show("open dir_fd", lambda: [open(n, opener=lambda p, f: os.open(p, f, dir_fd=fd)).read().strip() for n in sorted(os.listdir(fd))])
show("access dir_fd", lambda: os.access("..", os.R_OK, dir_fd=fd))
show("scandir fd", lambda: sorted(e.name for e in os.scandir(fd)))
show("fwalk", lambda: [(r.replace(base, ""), sorted(ds), sorted(fs)) for r, ds, fs, _ in os.fwalk(d)])
os.chdir(d)
show("cwd", lambda: os.getcwd().replace(base, ""))
show("listdir .", lambda: sorted(os.listdir(".")))
show("listdir ..", lambda: sorted(n for n in os.listdir("..") if not n.endswith(".sluice")))
show("fstat . is stat .", lambda: os.path.samestat(os.stat("."), os.fstat(os.open(".", os.O_RDONLY))))
show("read", lambda: [open(n).read().strip() for n in sorted(os.listdir("."))])
show("stat ..", lambda: stat.filemode(os.stat("..").st_mode))
show("realpath .", lambda: os.path.realpath(".").replace(base, ""))
show("statvfs .", lambda: os.statvfs(".").f_bsize > 0)
os.chdir("..")
show("cwd after ..", lambda: os.getcwd().replace(base, ""))
os.fchdir(fd)
show("cwd fchdir", lambda: os.getcwd().replace(base, ""))
os.chdir(base)
os.close(fd)
show("chmod", lambda: (os.chmod(d, 0o700), oct(os.stat(d).st_mode & 0o7777), os.chmod(d, 0o755))[1])
show("utime", lambda: (os.utime(d, (1200000000, 1200000000)), os.stat(d).st_mtime)[1])
show("utime ns", lambda: (os.utime(d, ns=(1300000000123456789, 1300000000123456789)), os.stat(d).st_mtime_ns)[1])
show("chown", lambda: os.chown(d, os.getuid(), os.getgid()))
