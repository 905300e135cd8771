/* C fixture: functions, prototypes, macros, structs, typedefs, enums, unions. */
#include <stdio.h>

#define BUFFER_SIZE 128
#define SQUARE(x) ((x) * (x))

struct point {
  int x;
  int y;
};

typedef struct point point_t;

enum color { RED, GREEN };

union value {
  int i;
  float f;
};

int add(int a, int b);

int add(int a, int b)
{
  return a + b;
}

static char *
name_of(struct point *p)
{
  (void)p;
  return "point";
}

int main(void)
{
  int broken = add(1, 2);
  printf("%d %s\n", SQUARE(broken), name_of(0));
  return 0;
}
