/* ELEMENTSOF: how many elements a fixed array holds, for loops over the tables and lists that
 * every folder keeps. On the lowest floor (parse/, which includes nothing) so that any folder may
 * use it. */
#ifndef VMHOST_PARSE_ELEMENTS_H
#define VMHOST_PARSE_ELEMENTS_H

/* The number of elements of the array x (not of a pointer: the compiler then warns that
 * sizeof(x) / sizeof(x[0]) divides a pointer's size). */
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#endif
