#include "barrage/common/arrival.h"
