package people

// common are passwords of ten characters or more that lists of leaked
// passwords show people choose most: refused whatever the case, so that
// the length rule is not met by the first thing everyone tries.
var common = map[string]bool{}

func init() {
	for _, p := range []string{
		"1234567890", "12345678910", "123456789a", "0123456789", "0987654321", "1234567890a",
		"1q2w3e4r5t", "1q2w3e4r5t6y", "1qaz2wsx3edc", "qwertyuiop", "qwertyuiop1", "qwerty1234",
		"qwerty12345", "qwerty123456", "asdfghjkl1", "asdfghjkl;", "zxcvbnm123", "1qazxsw23edc",
		"password12", "password123", "password1234", "password!1", "passw0rd12", "p@ssw0rd123",
		"passwordpassword", "mypassword", "mypassword1", "secretpassword", "changeme123", "changemenow",
		"welcome123", "welcome1234", "letmein123", "iloveyou12", "iloveyou123", "trustno1234",
		"administrator", "admin12345", "admin123456", "adminadmin", "rootroot12", "superuser1",
		"football123", "baseball123", "basketball", "basketball1", "princess123", "sunshine123",
		"starwars123", "dragon1234", "monkey12345", "shadow1234", "master1234", "michael123",
		"jordan2323", "liverpool1", "chelsea123", "arsenal123", "manchester", "babygirl12",
		"abcdefghij", "abcdefghijk", "abcd123456", "abc1234567", "aaaaaaaaaa", "1111111111",
		"0000000000", "2222222222", "9999999999", "1212121212", "1122334455", "5555555555",
		"0123456789a", "1234qwer!@#$", "1234512345", "9876543210", "7777777777", "6666666666",
		"linkforge1", "linkforge123", "linkforge2026", "shortlink1", "letmeinplease", "opensesame",
		"computer123", "internet123", "whatever123", "nothing123", "qazwsxedc123", "zaq12wsxcde",
		"summer2024", "summer2025", "summer2026", "winter2025", "winter2026", "spring2026",
		"autumn2026", "december2026", "january2027", "password2026", "welcome2026", "company123",
	} {
		common[p] = true
	}
}
