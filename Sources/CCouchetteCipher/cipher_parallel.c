/*
 * A small process-wide pool of threads that encrypt pages beside the calling thread.
 *
 * A commit's WAL frames are encrypted together (cipher_wal.c). AES-256-CBC encryption is sequential within a page
 * (each block depends on the previous one), so one thread runs at the latency of AES rounds; pages are independent,
 * so the other cores can take some. The pool has one thread fewer than the online processors (at most 3) and none on
 * a single core. One run at a time: a caller that finds the pool busy does all its work itself, so runs never wait on
 * each other. Items are claimed one at a time with an atomic counter, so a slow thread takes fewer.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "cipher_internal.h"

#define MAX_HELPERS 3

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;  /* a new run (generation changed) */
    pthread_cond_t done;  /* a helper finished its part of the run */
    unsigned long generation;
    int helpers;          /* threads started */
    int working;          /* helpers still in the current run */
    void (*work)(void *context, int index);
    void *context;
    int count;
    atomic_int next;      /* the next item to claim */
} page_pool;

static page_pool pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER,
};
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER; /* held by the one run using the pool */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/// Claims and runs items of the current run until none are left.
static void take_items(void (*work)(void *, int), void *context, int count) {
    for (;;) {
        int index = atomic_fetch_add(&pool.next, 1);
        if (index >= count) return;
        work(context, index);
    }
}

static void *helper_main(void *unused) {
    (void)unused;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.generation;
        void (*work)(void *, int) = pool.work;
        void *context = pool.context;
        int count = pool.count;
        pthread_mutex_unlock(&pool.lock);
        take_items(work, context, count);
        pthread_mutex_lock(&pool.lock);
        if (--pool.working == 0) pthread_cond_signal(&pool.done);
    }
    return NULL;
}

static void start_helpers(void) {
    long processors = sysconf(_SC_NPROCESSORS_ONLN);
    int wanted = processors > 1 ? (int)(processors - 1) : 0;
    if (wanted > MAX_HELPERS) wanted = MAX_HELPERS;
    for (int i = 0; i < wanted; i++) {
        pthread_t thread;
        pthread_attr_t attributes;
        if (pthread_attr_init(&attributes) != 0) break;
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attributes, 256 * 1024);
        int rc = pthread_create(&thread, &attributes, helper_main, NULL);
        pthread_attr_destroy(&attributes);
        if (rc != 0) break;
        pool.helpers++;
    }
}

void cc_parallel_run(int count, void (*work)(void *context, int index), void *context) {
    if (count <= 0) return;
    pthread_once(&pool_once, start_helpers);
    if (count < 2 || pool.helpers == 0 || pthread_mutex_trylock(&run_lock) != 0) {
        for (int index = 0; index < count; index++) work(context, index);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    pool.work = work;
    pool.context = context;
    pool.count = count;
    atomic_store(&pool.next, 0);
    pool.working = pool.helpers;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    take_items(work, context, count);

    pthread_mutex_lock(&pool.lock);
    while (pool.working > 0) pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&run_lock);
}
