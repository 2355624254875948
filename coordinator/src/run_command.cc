#include "barrage/coordinator/run_command.h"
