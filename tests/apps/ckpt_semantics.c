/* SPDX-License-Identifier: MIT */
/* POSIX file semantics on per-rank checkpoint names, written without sluice in mind: every check
 * here must pass on a plain file system, and the integration test runs it both without sluice
 * and with sluice capturing the names (capture_semantics.sh), so capture is proven invisible.
 *
 * Usage: ckpt_semantics DIR   (DIR exists and is empty; names used: DIR/ckpt.N, DIR/rank7/...,
 * DIR/restart_*_N.dat, DIR/chk_*\/rank_N.bin, DIR/plain.out) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Binaries built against glibc < 2.33 call __xstat; link this one the same way. */
extern int __xstat(int ver, const char *path, struct stat *st);
__asm__(".symver __xstat,__xstat@GLIBC_2.2.5");

static int failures;
static char dir[4096];

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (cond) {                                                                                          \
            printf("ok: " __VA_ARGS__);                                                                      \
            printf("\n");                                                                                    \
        } else {                                                                                             \
            fprintf(stderr, "FAIL (%s:%d, errno %s): ", __FILE__, __LINE__, strerror(errno));                \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

static const char *P(const char *name)
{
    static char buf[8][8192];
    static int i;
    i = (i + 1) % 8;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int read_all(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    int n = 0, k;
    while ((k = (int)read(fd, buf + n, cap - (size_t)n)) > 0)
        n += k;
    close(fd);
    return n;
}

static void readback_and_holes(void)
{
    int fd = open(P("ckpt.0"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, "create ckpt.0");
    CHECK(write(fd, "abc", 3) == 3, "write 3 bytes");
    char buf[64] = {0};
    CHECK(pread(fd, buf, sizeof buf, 0) == 3 && memcmp(buf, "abc", 3) == 0, "read own bytes back while open");
    CHECK(lseek(fd, 10, SEEK_SET) == 10 && write(fd, "Z", 1) == 1, "seek past end and write");
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 11, "fstat sees size 11");
    CHECK(file_size(P("ckpt.0")) == 11, "stat by name sees size 11 while open");
    CHECK(pread(fd, buf, 11, 0) == 11 && buf[5] == 0 && buf[10] == 'Z', "hole reads as zeros");
    CHECK(ftruncate(fd, 5) == 0 && file_size(P("ckpt.0")) == 5, "ftruncate shrinks to 5");
    CHECK(ftruncate(fd, 8) == 0 && pread(fd, buf, 8, 0) == 8 && buf[7] == 0, "ftruncate extends with zeros");
    CHECK(close(fd) == 0, "close");
    CHECK(read_all(P("ckpt.0"), buf, sizeof buf) == 8 && memcmp(buf, "abc", 3) == 0,
          "reopen reads the closed bytes");
}

static void append_and_dup(void)
{
    int fd = open(P("ckpt.1"), O_WRONLY | O_CREAT | O_APPEND, 0644);
    CHECK(fd >= 0 && write(fd, "12", 2) == 2, "create ckpt.1 with O_APPEND");
    int d1 = dup(fd);
    int d2 = fcntl(fd, F_DUPFD, 100);
    int d3 = dup2(fd, 90);
    CHECK(d1 >= 0 && d2 >= 100 && d3 == 90, "dup, fcntl(F_DUPFD), dup2");
    CHECK(close(fd) == 0, "close the original");
    CHECK(write(d1, "34", 2) == 2 && write(d2, "56", 2) == 2 && write(d3, "78", 2) == 2,
          "writes through dups");
    CHECK(close(d1) == 0 && close(d2) == 0, "close two dups");
    lseek(d3, 0, SEEK_SET);
    CHECK(write(d3, "9", 1) == 1, "O_APPEND write after seek to 0");
    CHECK(close(d3) == 0, "close the last dup");
    char buf[64];
    CHECK(read_all(P("ckpt.1"), buf, sizeof buf) == 9 && memcmp(buf, "123456789", 9) == 0,
          "all writes landed in order, appended");
    fd = open(P("ckpt.1"), O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && write(fd, "0", 1) == 1 && close(fd) == 0, "reopen without O_TRUNC and append");
    CHECK(read_all(P("ckpt.1"), buf, sizeof buf) == 10 && memcmp(buf, "1234567890", 10) == 0,
          "old bytes kept, new appended");
}

static void mmap_and_flock(void)
{
    int fd = open(P("ckpt.2"), O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 8192) == 0, "create ckpt.2 of 8 KiB");
    char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED, "mmap MAP_SHARED");
    if (p != MAP_FAILED) {
        memset(p, 'm', 8192);
        p[4096] = 'X';
        CHECK(msync(p, 8192, MS_SYNC) == 0 && munmap(p, 8192) == 0, "msync, munmap");
    }
    CHECK(flock(fd, LOCK_EX) == 0 && flock(fd, LOCK_UN) == 0, "flock");
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && (st.st_mode & 0777) == (0600 & ~0u), "mode 0600 as requested");
    CHECK(close(fd) == 0, "close");
    char buf[8192];
    CHECK(read_all(P("ckpt.2"), buf, sizeof buf) == 8192 && buf[0] == 'm' && buf[4096] == 'X',
          "bytes written through mmap read back");
}

static void stdio_paths(void)
{
    FILE *f = fopen(P("ckpt.3"), "w");
    CHECK(f != NULL, "fopen w");
    if (!f)
        return;
    fprintf(f, "step %d\n", 42);
    fputs("line two\n", f);
    fputc('!', f);
    fwrite("tail", 1, 4, f);
    CHECK(fflush(f) == 0 && ftell(f) == 22, "fflush, ftell 22");
    CHECK(file_size(P("ckpt.3")) == 22, "size visible by name after fflush");
    CHECK(fclose(f) == 0, "fclose");
    f = fopen(P("ckpt.3"), "r");
    char line[64];
    int v = 0;
    CHECK(f && fscanf(f, "step %d\n", &v) == 1 && v == 42, "fscanf reads the number back");
    CHECK(f && fgets(line, sizeof line, f) && strcmp(line, "line two\n") == 0, "fgets reads line two");
    CHECK(f && fseek(f, -4, SEEK_END) == 0 && fread(line, 1, 4, f) == 4 && memcmp(line, "tail", 4) == 0,
          "fseek from end");
    if (f)
        fclose(f);
    f = fopen(P("ckpt.3"), "a+");
    CHECK(f && fputs("+more", f) >= 0 && fclose(f) == 0, "fopen a+ appends");
    CHECK(file_size(P("ckpt.3")) == 27, "appended size 27");
    CHECK(truncate(P("ckpt.0"), 6) == 0 && file_size(P("ckpt.0")) == 6, "truncate by name");
    CHECK(truncate(P("ckpt.98"), 6) != 0 && errno == ENOENT, "truncate of a missing member: ENOENT");
    f = fopen(P("ckpt.3"), "wx");
    CHECK(f == NULL && errno == EEXIST, "fopen wx on an existing member: EEXIST");
    f = fopen(P("ckpt.44"), "r");
    CHECK(f == NULL && errno == ENOENT, "fopen r of a missing member: ENOENT");
    f = fopen(P("plain.out"), "w");
    CHECK(f && freopen(P("ckpt.4"), "w", f) == f, "freopen a stream onto a member");
    CHECK(f && fputs("via freopen", f) >= 0 && fclose(f) == 0, "write and fclose the reopened stream");
    CHECK(file_size(P("ckpt.4")) == 11, "freopen'd member has 11 bytes");
    f = fopen(P("ckpt.4"), "a");
    CHECK(f && fputs("+", f) >= 0 && (f = freopen(NULL, "a+", f)) != NULL,
          "freopen(NULL) changes the mode of an open member");
    CHECK(f && fputs("-", f) >= 0 && fseek(f, 0, SEEK_SET) == 0 && fgetc(f) == 'v' && fclose(f) == 0,
          "write and read through the new mode");
    CHECK(file_size(P("ckpt.4")) == 13, "both appends landed: 13 bytes");
}

static void names(void)
{
    CHECK(access(P("ckpt.3"), F_OK) == 0 && access(P("ckpt.3"), R_OK | W_OK) == 0, "access of a member");
    CHECK(access(P("ckpt.99"), F_OK) != 0 && errno == ENOENT, "access of a missing member: ENOENT");
    struct stat st;
    CHECK(stat(P("ckpt.99"), &st) != 0 && errno == ENOENT, "stat of a missing member: ENOENT");
    CHECK(__xstat(1, P("ckpt.3"), &st) == 0 && st.st_size == 27 && S_ISREG(st.st_mode),
          "old-ABI __xstat of a member");
    CHECK(open(P("ckpt.99"), O_RDONLY) < 0 && errno == ENOENT, "open of a missing member: ENOENT");
    CHECK(open(P("ckpt.99"), O_WRONLY) < 0 && errno == ENOENT, "open for write without O_CREAT: ENOENT");
    CHECK(open(P("nodir/ckpt.5"), O_WRONLY | O_CREAT, 0644) < 0 && errno == ENOENT,
          "create in a missing folder: ENOENT");
    CHECK(open(P("ckpt.3"), O_WRONLY | O_CREAT | O_EXCL, 0644) < 0 && errno == EEXIST,
          "O_EXCL on an existing member: EEXIST");
    CHECK(open(P("ckpt.3/x"), O_RDONLY) < 0, "a member is not a folder");

    /* rename between members, member -> plain name, plain name -> member */
    CHECK(rename(P("ckpt.4"), P("ckpt.5")) == 0, "rename member to member");
    CHECK(stat(P("ckpt.4"), &st) != 0 && errno == ENOENT && file_size(P("ckpt.5")) == 13,
          "old name gone, new name has the bytes");
    int fd = open(P("ckpt.6"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "open-rename", 11) == 11, "write ckpt.6, keep it open");
    CHECK(rename(P("ckpt.6"), P("ckpt.7")) == 0 && write(fd, "!", 1) == 1 && close(fd) == 0,
          "rename while open, write more, close");
    CHECK(file_size(P("ckpt.7")) == 12 && access(P("ckpt.6"), F_OK) != 0,
          "open member renamed with all its bytes");
    CHECK(rename(P("ckpt.5"), P("plain.out")) == 0 && file_size(P("plain.out")) == 13,
          "rename member to a plain name");
    CHECK(rename(P("plain.out"), P("ckpt.8")) == 0 && file_size(P("ckpt.8")) == 13 &&
              access(P("plain.out"), F_OK) != 0,
          "rename plain file to a member name");

    /* unlink: a closed member, and one unlinked while open */
    CHECK(unlink(P("ckpt.8")) == 0 && access(P("ckpt.8"), F_OK) != 0 && errno == ENOENT, "unlink a member");
    CHECK(unlink(P("ckpt.8")) != 0 && errno == ENOENT, "unlink it again: ENOENT");
    fd = open(P("ckpt.9"), O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "doomed", 6) == 6 && unlink(P("ckpt.9")) == 0, "unlink while open");
    char buf[16];
    CHECK(pread(fd, buf, 6, 0) == 6 && memcmp(buf, "doomed", 6) == 0 && close(fd) == 0,
          "the open descriptor still reads it");
    CHECK(access(P("ckpt.9"), F_OK) != 0, "unlinked member never reappears");
    CHECK(remove(P("ckpt.7")) == 0 && access(P("ckpt.7"), F_OK) != 0, "remove a member");
}

/* The mode a closed file shows is the one its creator asked, umask applied, before and after
 * any commit; an existing member answers the probes that coreutils make before replacing a
 * file (cp opens the target O_PATH|O_DIRECTORY to tell "folder" from "file"). */
static void modes_and_probes(void)
{
    mode_t old = umask(027);
    int fd = open(P("ckpt.20"), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    CHECK(fd >= 0 && write(fd, "mode", 4) == 4 && close(fd) == 0, "create ckpt.20 under umask 027");
    umask(old);
    struct stat st;
    CHECK(stat(P("ckpt.20"), &st) == 0 && (st.st_mode & 07777) == 0640 && S_ISREG(st.st_mode),
          "stat of the closed member: mode 0640");
    errno = 0;
    fd = open(P("ckpt.20"), O_RDONLY | O_PATH | O_DIRECTORY);
    CHECK(fd < 0 && errno == ENOTDIR, "O_PATH|O_DIRECTORY open of a member: ENOTDIR");
    fd = open(P("ckpt.20"), O_PATH);
    CHECK(fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4 && close(fd) == 0,
          "O_PATH open of a member: fstat sees a 4-byte file");
    errno = 0;
    CHECK(open(P("ckpt.21"), O_RDONLY | O_PATH | O_DIRECTORY) < 0 && errno == ENOENT,
          "O_PATH|O_DIRECTORY open of a missing member: ENOENT");
}

static int has(char **names, int n, const char *want)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], want) == 0)
            return 1;
    return 0;
}

static void shapes_and_listings(void)
{
    /* restart_*_%r.dat with a step number, chk_*\/rank_%r.bin in a folder per step */
    for (int step = 10; step <= 20; step += 10) {
        char name[256];
        snprintf(name, sizeof name, "restart_%d_3.dat", step);
        int fd = creat(P(name), 0644);
        CHECK(fd >= 0 && write(fd, name, strlen(name)) == (ssize_t)strlen(name) && close(fd) == 0, "creat %s",
              name);
        snprintf(name, sizeof name, "chk_%d", step);
        CHECK(mkdir(P(name), 0755) == 0, "mkdir %s (a real per-step folder)", name);
        snprintf(name, sizeof name, "chk_%d/rank_3.bin", step);
        FILE *f = fopen(P(name), "wb");
        CHECK(f && fwrite(name, 1, strlen(name), f) == strlen(name) && fclose(f) == 0, "fopen %s", name);
    }
    /* rank%r/ckpt.dat: per-rank folders */
    CHECK(mkdir(P("rank7"), 0755) == 0, "mkdir rank7");
    CHECK(mkdir(P("rank7"), 0755) != 0 && errno == EEXIST, "mkdir rank7 again: EEXIST");
    struct stat st;
    CHECK(stat(P("rank7"), &st) == 0 && S_ISDIR(st.st_mode), "rank7 is a folder");
    int fd = open(P("rank7/ckpt.dat"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "rank seven", 10) == 10 && close(fd) == 0, "write rank7/ckpt.dat");
    CHECK(file_size(P("rank7/ckpt.dat")) == 10, "rank7/ckpt.dat has 10 bytes");
    CHECK(open(P("rank8/ckpt.dat"), O_WRONLY | O_CREAT, 0644) < 0 && errno == ENOENT,
          "rank8 was never made: ENOENT");

    /* readdir, scandir, glob see every member */
    DIR *d = opendir(dir);
    char *seen[256];
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < 256)
        seen[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    CHECK(has(seen, n, "ckpt.0") && has(seen, n, "ckpt.3") && has(seen, n, "restart_20_3.dat") &&
              has(seen, n, "rank7") && has(seen, n, "chk_10") && !has(seen, n, "ckpt.9"),
          "readdir lists members, per-rank and per-step folders, not unlinked ones");
    int dup_count = 0;
    for (int i = 0; i < n; i++)
        dup_count += strcmp(seen[i], "ckpt.0") == 0;
    CHECK(dup_count == 1, "each name listed once");
    while (n > 0)
        free(seen[--n]);
    struct dirent **list;
    int k = scandir(P("chk_20"), &list, NULL, alphasort);
    int found = 0;
    for (int i = 0; i < k; i++) {
        found += strcmp(list[i]->d_name, "rank_3.bin") == 0;
        free(list[i]);
    }
    if (k >= 0)
        free(list);
    CHECK(found == 1, "scandir of a step folder lists its member");
    k = scandir(P("rank7"), &list, NULL, alphasort);
    found = 0;
    for (int i = 0; i < k; i++) {
        found += strcmp(list[i]->d_name, "ckpt.dat") == 0;
        free(list[i]);
    }
    if (k >= 0)
        free(list);
    CHECK(found == 1, "scandir of a per-rank folder lists its member");
    glob_t g;
    CHECK(glob(P("ckpt.[0-3]"), 0, NULL, &g) == 0 && g.gl_pathc == 4, "glob ckpt.[0-3] finds 4 members");
    globfree(&g);
    CHECK(glob(P("restart_*_3.dat"), 0, NULL, &g) == 0 && g.gl_pathc == 2,
          "glob restart_*_3.dat finds both steps");
    globfree(&g);
}

/* Eight threads write, dup, reopen and read back their own members at the same time, while
 * opening non-captured files: the fd table and member table under contention. */
static void *thread_body(void *arg)
{
    long t = (long)arg;
    char name[64], path[8300], plain[8300], want[4096], got[4096];
    snprintf(name, sizeof name, "ckpt.%ld", 100 + t);
    snprintf(path, sizeof path, "%s/%s", dir, name); /* P() is not thread-safe */
    snprintf(plain, sizeof plain, "%s/threads.plain", dir);
    for (size_t i = 0; i < sizeof want; i++)
        want[i] = (char)(i * 7 + (size_t)t);
    long bad = 0;
    for (int round = 0; round < 20; round++) {
        FILE *f = fopen(path, "w");
        if (!f || fwrite(want, 1, sizeof want, f) != sizeof want) {
            fprintf(stderr, "thread %ld round %d: fopen/fwrite %s: %s\n", t, round, name, strerror(errno));
            bad++;
            if (f)
                fclose(f);
            continue;
        }
        int d = dup(fileno(f));
        int pfd = open(plain, O_RDONLY);
        if (fclose(f) != 0 || d < 0 || pwrite(d, "!", 1, 0) != 1 || close(d) != 0) {
            fprintf(stderr, "thread %ld round %d: fclose/dup/pwrite/close %s: %s\n", t, round, name,
                    strerror(errno));
            bad++;
        }
        if (pfd >= 0)
            close(pfd);
        want[0] = '!';
        int n = read_all(path, got, sizeof got);
        if (n != (int)sizeof got || memcmp(got, want, sizeof got) != 0) {
            fprintf(stderr, "thread %ld round %d: read back %s: %d bytes (%s)\n", t, round, name, n,
                    strerror(errno));
            bad++;
        }
        want[0] = (char)t;
    }
    return (void *)bad;
}

static void threads(void)
{
    close(open(P("threads.plain"), O_WRONLY | O_CREAT, 0644));
    pthread_t th[8];
    for (long t = 0; t < 8; t++)
        pthread_create(&th[t], NULL, thread_body, (void *)t);
    long bad = 0;
    for (int t = 0; t < 8; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad += (long)r;
    }
    CHECK(bad == 0, "8 threads x 20 rounds of write, dup, close, read back: %ld failures", bad);
    unlink(P("threads.plain"));
}

/* A forked child writes through the descriptor it inherited and ends with _exit; the parent
 * waits, writes more and closes: the member holds both. realpath names a member. */
static void fork_and_realpath(void)
{
    int fd = open(P("ckpt.11"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "parent1 ", 8) == 8, "parent writes ckpt.11");
    pid_t pid = fork();
    if (pid == 0) {
        ssize_t w = write(fd, "child ", 6);
        _exit(w == 6 ? 0 : 1);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "child wrote and exited");
    CHECK(write(fd, "parent2", 7) == 7 && close(fd) == 0, "parent writes more and closes");
    char buf[64] = {0};
    CHECK(read_all(P("ckpt.11"), buf, sizeof buf) == 21 && memcmp(buf, "parent1 child parent2", 21) == 0,
          "member holds parent and child bytes in order");
    char *rp = realpath(P("ckpt.11"), NULL);
    char *want_rp = realpath(dir, NULL);
    char expect[8300];
    snprintf(expect, sizeof expect, "%s/ckpt.11", want_rp ? want_rp : dir);
    CHECK(rp != NULL && strcmp(rp, expect) == 0, "realpath of a member");
    free(rp);
    free(want_rp);
    errno = 0;
    CHECK(realpath(P("ckpt.97"), NULL) == NULL && errno == ENOENT, "realpath of a missing member: ENOENT");
}

static void sync_member(void)
{
    int fd = open(P("ckpt.10"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "durable", 7) == 7, "write ckpt.10");
    CHECK(fsync(fd) == 0 && fdatasync(fd) == 0, "fsync and fdatasync succeed");
    CHECK(close(fd) == 0, "close");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    readback_and_holes();
    append_and_dup();
    mmap_and_flock();
    stdio_paths();
    names();
    modes_and_probes();
    shapes_and_listings();
    threads();
    fork_and_realpath();
    sync_member();
    printf("%s\n", failures ? "SEMANTICS FAILED" : "all semantics checks passed");
    return failures ? 1 : 0;
}
