#include "barrage/coordinator/cli.h"
