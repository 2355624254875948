#include "barrage/coordinator/records_writer.h"
