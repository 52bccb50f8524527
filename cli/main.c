/* main.c -- dgrun command line (placeholder: being written). */
#include "dgrun.h"
int main(void) { return 0; }
