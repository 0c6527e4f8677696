/*
 * diskprobe-prober - one target's disk I/O, out of the collectd daemon.
 *
 * Started by the diskprobe plugin (prober.h), never by hand: descriptor 3
 * is the page it shares with the daemon, 4 its command socket. It runs
 * until the daemon closes the socket; I/O the kernel still holds then keeps
 * this process, not collectd, from exiting.
 */
#include "prober.h"

#include <stdio.h>

int main(int argc, char **argv) {
  (void)argc;
  int rc = dp_prober_serve(3, 4);
  if (rc == 2)
    fprintf(stderr,
            "%s: started by the diskprobe collectd plugin, not by hand\n",
            argv[0]);
  return rc;
}
