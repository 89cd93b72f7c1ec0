/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amtctl: administer the async_mm_teardown kernel module. Declarations
 * shared between the command files.
 *
 * Copyright (C) 2026 The async_mm_teardown authors.
 */
#ifndef AMTCTL_H
#define AMTCTL_H

#include <stdbool.h>
#include <stddef.h>
#include "interface.h"

#define AMTCTL_UNUSED	__attribute__((unused))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Exit status of every command: see amtctl help and amtctl(8). */
enum {
	AMTCTL_OK = 0,
	AMTCTL_ERR = 1,		/* the operation failed */
	AMTCTL_USAGE = 2,	/* bad command line */
	AMTCTL_NOT_LOADED = 3,	/* the module is not loaded */
	AMTCTL_TIMEOUT = 4,	/* drain: timed out */
};

struct amtctl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;	/* synopsis after the name */
	const char *summary;	/* one line for amtctl help */
	const char *help;	/* the rest of amtctl help CMD */
};

extern bool amtctl_verbose;
extern const char *amtctl_cmd_name;	/* the running command, for messages */

/* Messages: "amtctl CMD: ..." on stderr. */
void amtctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int amtctl_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* After getopt_long() returned '?' or ':' (optstring starts with ':'). */
int amtctl_bad_option(int c, char **argv);

/* Files: bytes read or -errno; 0 or a positive errno. */
int amtctl_read_file(const char *path, char *buf, size_t len);
int amtctl_write_file(const char *path, const char *val);
bool amtctl_loaded(void);
bool amtctl_have_cap(int cap);
const char *amtctl_kernel_release(void);
long amtctl_page_size(void);
double amtctl_pages_mib(unsigned long long pages);
/* Parse a strictly positive decimal number of seconds (at most @max). */
int amtctl_parse_seconds(const char *s, double max, double *out);

/* Kernel log: remember the end now, print our module's lines added since. */
struct amtctl_kmsg {
	int fd;
};

void amtctl_kmsg_mark(struct amtctl_kmsg *k);
int amtctl_kmsg_print_new(struct amtctl_kmsg *k);
void amtctl_kmsg_close(struct amtctl_kmsg *k);

/* Parameters: the settable ones and their client-side checks. */
struct amtctl_param {
	const char *name;
	bool is_bool;
	bool load_only;			/* modprobe only: read-only in sysfs */
	unsigned long min, max;		/* a number's range (max: ULONG_MAX
					 * if only the kernel knows it) */
	const char *allowed;
	const char *const *choices;	/* NULL-terminated, for named values */
};

const struct amtctl_param *amtctl_param_find(const char *name);
const char *amtctl_param_names(void);
/* Split NAME=VALUE and check the name; 0 or AMTCTL_USAGE (message given). */
int amtctl_param_arg(char *arg, const struct amtctl_param **p, char **val);
bool amtctl_param_value_ok(const struct amtctl_param *p, const char *val);

/* The stats file. */
struct amtctl_stat {
	char name[64];
	char value[32];
	bool numeric;		/* an integer: printed as a number */
	double num;
};

struct amtctl_stats {
	int n;
	struct amtctl_stat s[128];
};

int amtctl_stats_read(struct amtctl_stats *st);	/* 0 or a positive errno */
const struct amtctl_stat *amtctl_stats_get(const struct amtctl_stats *st,
					   const char *name);
/* Explain a failed stats read; returns the exit status to use. */
int amtctl_stats_error(int err);

/* Commands. */
int amtctl_status(int argc, char **argv);
int amtctl_load(int argc, char **argv);
int amtctl_unload(int argc, char **argv);
int amtctl_set(int argc, char **argv);
int amtctl_drain(int argc, char **argv);
int amtctl_stats(int argc, char **argv);
int amtctl_watch(int argc, char **argv);

#endif /* AMTCTL_H */
